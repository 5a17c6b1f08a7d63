"""Pure functions on arrays: localise the board, warp, crop, classify. Imports nothing of the
project but `errors`; onnxruntime and torch are imported lazily where they are needed."""
