"""The application layer: the ``nxrecomp`` commands (``cli.py`` gathers them) and what they
compose — building bundles (``build.py``), running them under the supervisor (``run.py``,
``supervisor.py``, ``supervise_bundle.py``), the main jobs (``demo_job.py``, ``main_job.py``), the
report (``report.py``, ``plot.py``, ``frame_stats.py``, ``run_watch.py``) and ``doctor.py``.
It may import every other package; nothing imports it (tests/test_structure.py checks)."""
