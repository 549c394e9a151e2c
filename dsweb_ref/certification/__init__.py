"""Certification tooling: the DeepSeek web API emulator and the suite that drives implementations against it."""
