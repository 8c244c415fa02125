"""`python -m reducekit.bench`: the benchmark command (cli.main), as `python -m reducekit.bench` ran
it when the harness was one module."""
from .cli import main

main()
