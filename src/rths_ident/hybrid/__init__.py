"""The virtual RTHS loop: transfer system, compensation, rate transition, sensors,
model-updating hook and the loop engines."""
