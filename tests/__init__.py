"""The test suite (a regular package, so a library that ships a top-level ``tests`` package
(Canaille does) cannot take the name ``tests.support`` from it)."""
