"""The common layer, beneath every other package: settings (the one table), logging, errors,
progress bars, building small C libraries through cffi (``clib``) and fetching Debian packages
(``debian``).  It imports nothing else of the project (tests/test_structure.py checks); the
settings table finds the other packages' rows by module name (``settings.SECTION_MODULES``)."""
