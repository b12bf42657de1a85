"""The parts every widget is built from: time control, playhead, fields, share bar, theme."""
