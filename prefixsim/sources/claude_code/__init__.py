"""Claude Code session transcripts: the reader, one message's contents, and the calibration of its calls."""
