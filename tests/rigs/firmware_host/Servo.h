// Host stand-in for the Arduino Servo library: remembers the last pulse width.
#pragma once
extern int g_pulse_us;
struct Servo {
  void attach(int, int, int) {}
  void writeMicroseconds(int us) { g_pulse_us = us; }
};
