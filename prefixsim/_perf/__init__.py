"""Speed-ups that change no number: the start-up memo on disk and the paused garbage collector."""
