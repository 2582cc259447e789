"""The benchmark: a data generator (`python -m bench.seed`), a load run
(`python -m bench.run`) and the ceiling app it compares against
(`bench.ceiling`). See docs/benchmark.md."""
