"""Adapters to the Raspberry Pi's hardware: frame sources (`sources`, `picamera`) and the
players' signals (`signals`, `cues`, `button`, `pinmap`). Nothing here imports picamera2 or
a gpiozero pin back-end at import time, so `import referee.hardware` works on any laptop."""
