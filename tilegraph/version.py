"""The package's version, in a module that imports nothing, so that any layer may name it
(the ONNX exporter records it as the model's ``producer_version``)."""

__version__ = "0.1.0"
