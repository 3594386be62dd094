"""The hybrid loop: engines, the model-updating hook, safe stop, real-time pacing and the assembled test they run."""
