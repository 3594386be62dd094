// Host stand-in for the Arduino core, enough to build firmware/rths_rig/rths_rig.ino with
// g++ for tests: Serial on stdin/stdout, a fake current channel, no real waiting.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <unistd.h>

#define A0 14

struct HostSerial {
  void begin(long) {}
  int available() {
    struct pollfd fd = {0, POLLIN, 0};
    if (poll(&fd, 1, 10) <= 0) return 0;
    if (fd.revents & (POLLHUP | POLLERR)) std::exit(0);  // the port went away: the board is gone
    return 1;
  }
  int read() {
    unsigned char c;
    if (::read(0, &c, 1) != 1) std::exit(0);
    return c;
  }
  void print(const char *s) { if (::write(1, s, std::strlen(s)) < 0) std::exit(0); }
};
extern HostSerial Serial;

void delay(unsigned long ms);
int analogRead(int pin);
