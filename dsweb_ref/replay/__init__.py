"""Recording and replay: named live probes, ``dsweb record``, and loading and scrubbing vcrpy cassettes."""
