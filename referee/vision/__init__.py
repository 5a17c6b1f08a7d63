"""Pure functions on arrays: calibrate, localise the board, warp, crop, classify. Imports
nothing of the project but `errors`; onnxruntime and torch are imported lazily where needed."""
