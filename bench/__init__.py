"""Load benchmark of Dados (`make bench`): see bench/run.py and bench/RESULTS.md."""
