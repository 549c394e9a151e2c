# The one place the version is written: hatchling reads it at build time ([tool.hatch.version] in
# pyproject.toml), and `dsweb --version` reads it without importlib.metadata's start-up cost.
__version__ = "0.1.0"
