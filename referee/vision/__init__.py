"""Pure functions on arrays: calibrate, localise, warp, crop, classify. Imports nothing of
the project but `referee.errors`."""
