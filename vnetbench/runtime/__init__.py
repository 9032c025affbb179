"""What a run is made of around the engine: the labels of its objects and their owners,
the project's images and non-Python files, the start gate, TLS material and scratch
keys, the signals that end it and its run directory."""
