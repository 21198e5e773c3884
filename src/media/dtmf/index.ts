export {
  MAX_DIGIT_STRING,
  parseDigitString,
  type DigitSchedule,
  type ScheduledDigit,
} from './digit-schedule.js';
export {
  DTMF_DIGITS,
  digitOfEvent,
  eventOfDigit,
  isDtmfDigit,
  toneFrequencies,
  type DtmfDigit,
} from './dtmf-digit.js';
export { dtmfTone } from './dtmf-tone.js';
export { DtmfParseError } from './dtmf-parse-error.js';
export { DtmfReceiver, type ReceivedDigit, type TelephoneEventPacket } from './dtmf-receiver.js';
export { digitPackets, type DigitSendOptions, type OutgoingEventPacket } from './dtmf-sender.js';
export { goertzelPower } from './goertzel.js';
export { InbandDtmfDetector, type DetectedDigit } from './inband-dtmf-detector.js';
export { carriesDtmf, parseSipInfoDtmf, type SipInfoDigit } from './sip-info-dtmf.js';
export {
  decodeTelephoneEvent,
  encodeTelephoneEvent,
  TELEPHONE_EVENT_LENGTH,
  type TelephoneEvent,
} from './telephone-event.js';
