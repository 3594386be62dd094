// rths_rig.ino — reference firmware for rths_ident's rig line protocol (docs/rigs.md).
//
// Board: Arduino Uno. Actuator: SG90 micro servo on pin 9. Force channel: ACS712 current
// sensor (5 A, 185 mV/A) on the servo's supply, analog pin A0 (seed 002, Martínez
// Brugarolas 2020, chapters 3-4). The host (rths_ident.rigs.serial_site) sends an angle,
// the board moves the servo, waits for it to settle — current drawn while moving is not
// load (seed 002 §3, §7.1.4) — reads the ADC and answers with the raw count. Calibration
// (counts -> newtons, the sign of the force) is done on the host, where it is logged.
//
// Protocol version 1, 115200 baud 8N1. One message per line: ASCII fields separated by
// one space, '*', two upper-case hex digits (XOR of every byte before '*'), '\n'.
//   host  H <version>                 device  H <version> <device> <adc_bits> <settle_ms>
//   host  M <seq> <angle_mdeg>        device  R <seq> <adc> <wait_ms>
//   host  S <seq>                     device  K <seq>
//   device at boot: B <version> <device>       on error: E <seq> <code> <text>

#include <Servo.h>

const unsigned int PROTOCOL_VERSION = 1;
const char DEVICE_ID[] = "UNO-SG90-ACS712";
const long BAUD_RATE = 115200;
const int SERVO_PIN = 9;
const int CURRENT_PIN = A0;
const unsigned int ADC_BITS = 10;
const unsigned int SETTLE_MS = 40;          // wait after the travel before reading (seed 002 §3)
const unsigned int SERVO_MS_PER_60_DEG = 100;  // SG90: 0.1 s / 60° (seed 002 §3)
const int ADC_SAMPLES = 8;                  // readings averaged after the settle wait
const int PULSE_MIN_US = 1000;              // pulse width at 0°
const int PULSE_MAX_US = 2000;              // pulse width at 180°
const int MAX_LINE = 64;                    // bytes per line, newline included
const long ANGLE_MDEG_MAX = 180000;         // angles travel in millidegrees
const long NEUTRAL_MDEG = 90000;            // the arm's neutral position

const unsigned int ERR_CHECKSUM = 1;        // bad checksum (or not a line of this protocol)
const unsigned int ERR_COMMAND = 2;         // unknown command or wrong number of fields
const unsigned int ERR_RANGE = 3;           // angle out of range
const unsigned int ERR_VERSION = 4;         // unsupported protocol version
const unsigned int ERR_TOO_LONG = 5;        // line too long

Servo servo;
char buffer[MAX_LINE];
int length = 0;
bool overflow = false;
long currentMdeg = NEUTRAL_MDEG;

int pulseFor(long mdeg) {
  return PULSE_MIN_US + (int)((mdeg * (long)(PULSE_MAX_US - PULSE_MIN_US) + ANGLE_MDEG_MAX / 2) / ANGLE_MDEG_MAX);
}

void sendLine(const char *payload) {
  unsigned int sum = 0;
  for (const char *p = payload; *p; ++p) sum ^= (unsigned char)*p;
  char tail[6];
  snprintf(tail, sizeof tail, "*%02X\n", sum);
  Serial.print(payload);
  Serial.print(tail);
}

void sendError(unsigned int seq, unsigned int code, const char *text) {
  char out[MAX_LINE];
  snprintf(out, sizeof out, "E %u %u %s", seq, code, text);
  sendLine(out);
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Checks and strips the "*HH" checksum; false if it is missing or wrong.
bool checksumOk(char *text) {
  char *star = strrchr(text, '*');
  if (star == NULL || strlen(star) != 3) return false;
  int high = hexDigit(star[1]), low = hexDigit(star[2]);
  if (high < 0 || low < 0) return false;
  unsigned int sum = 0;
  for (char *p = text; p < star; ++p) sum ^= (unsigned char)*p;
  *star = '\0';
  return sum == (unsigned int)(high * 16 + low);
}

// Parses the unsigned decimal fields after the one-letter kind: "M 12 90000" -> {12, 90000}.
// Returns the number of fields, or -1 when the line is not "<kind>( <digits>)*".
int parseFields(const char *text, unsigned long *values, int maxValues) {
  const char *p = text + 1;
  int count = 0;
  while (*p) {
    if (*p != ' ' || count == maxValues) return -1;
    ++p;
    if (*p < '0' || *p > '9') return -1;
    unsigned long value = 0;
    while (*p >= '0' && *p <= '9') value = value * 10 + (unsigned long)(*p++ - '0');
    values[count++] = value;
  }
  return count;
}

unsigned int readForceChannel() {
  long sum = 0;
  for (int i = 0; i < ADC_SAMPLES; ++i) sum += analogRead(CURRENT_PIN);
  return (unsigned int)((sum + ADC_SAMPLES / 2) / ADC_SAMPLES);
}

void handle(char *text) {
  if (!checksumOk(text)) {
    sendError(0, ERR_CHECKSUM, "bad line");
    return;
  }
  unsigned long fields[3];
  int n = parseFields(text, fields, 3);
  char out[MAX_LINE];
  if (text[0] == 'H' && n == 1) {
    if (fields[0] != PROTOCOL_VERSION) {
      sendError(0, ERR_VERSION, "version");
      return;
    }
    snprintf(out, sizeof out, "H %u %s %u %u", PROTOCOL_VERSION, DEVICE_ID, ADC_BITS, SETTLE_MS);
    sendLine(out);
  } else if (text[0] == 'M' && n == 2) {
    unsigned int seq = (unsigned int)(fields[0] & 0xFFFF);
    long mdeg = (long)fields[1];
    if (fields[1] > (unsigned long)ANGLE_MDEG_MAX) {
      sendError(seq, ERR_RANGE, "angle");
      return;
    }
    long travel = labs(mdeg - currentMdeg);
    unsigned long wait = (unsigned long)(travel * SERVO_MS_PER_60_DEG / 60000L) + SETTLE_MS;
    servo.writeMicroseconds(pulseFor(mdeg));
    currentMdeg = mdeg;
    delay(wait);  // travel, then settle: the servo must be still before the current is read
    snprintf(out, sizeof out, "R %u %u %lu", seq, readForceChannel(), wait);
    sendLine(out);
  } else if (text[0] == 'S' && n == 1) {
    servo.writeMicroseconds(pulseFor(currentMdeg));  // hold: keep the last pulse
    snprintf(out, sizeof out, "K %u", (unsigned int)(fields[0] & 0xFFFF));
    sendLine(out);
  } else {
    sendError(0, ERR_COMMAND, "bad command");
  }
}

void setup() {
  Serial.begin(BAUD_RATE);
  servo.attach(SERVO_PIN, PULSE_MIN_US, PULSE_MAX_US);
  servo.writeMicroseconds(pulseFor(currentMdeg));
  char out[MAX_LINE];
  snprintf(out, sizeof out, "B %u %s", PROTOCOL_VERSION, DEVICE_ID);
  sendLine(out);
}

void loop() {
  while (Serial.available() > 0) {
    char c = (char)Serial.read();
    if (c == '\n') {
      if (length > 0 && buffer[length - 1] == '\r') --length;
      buffer[length] = '\0';
      if (overflow) sendError(0, ERR_TOO_LONG, "too long");
      else if (length > 0) handle(buffer);
      length = 0;
      overflow = false;
    } else if (length < MAX_LINE - 2) {
      buffer[length++] = c;
    } else {
      overflow = true;
    }
  }
}
