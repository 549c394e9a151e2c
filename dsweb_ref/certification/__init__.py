"""Certification: checks, targets (reference, adapter), the suite, endpoint certification, reports,
known failures and the pytest plugin."""
