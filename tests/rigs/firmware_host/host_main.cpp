// Builds the reference firmware for the host: the current channel reads
// 512 + |pulse − 1500 µs| / 5 counts, so a test can check what the board computed.
#include "Arduino.h"
#include "Servo.h"
#include "../../../firmware/rths_rig/rths_rig.ino"

HostSerial Serial;
int g_pulse_us = 1500;
void delay(unsigned long) {}
int analogRead(int) { return 512 + std::abs(g_pulse_us - 1500) / 5; }

int main() {
  setup();
  for (;;) loop();
}
