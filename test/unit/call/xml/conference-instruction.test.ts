import { describe, expect, it } from 'vitest';
import { parseAnswerXml } from '../../../../src/call/xml/parse-answer-xml.js';

const conference = (xml: string) => parseAnswerXml(`<Response>${xml}</Response>`).instructions[0];

describe('<Conference>', () => {
  it('reads the room name and applies the public API defaults', () => {
    expect(conference('<Conference> My Room </Conference>')).toEqual({
      kind: 'Conference',
      name: 'My Room',
      muted: false,
      enterSound: null,
      exitSound: null,
      startConferenceOnEnter: true,
      endConferenceOnExit: false,
      stayAlone: true,
      waitSound: null,
      maxMembers: 20,
      timeLimit: 86400,
      hangupOnStar: false,
      record: false,
      recordFileFormat: 'mp3',
      recordWhenAlone: false,
      action: null,
      method: 'POST',
      redirect: true,
      callbackUrl: null,
      callbackMethod: 'POST',
      digitsMatch: [],
      floorEvent: false,
      relayDTMF: true,
    });
  });

  it('reads every attribute as written', () => {
    const xml =
      '<Conference muted="true" enterSound="beep:2" exitSound="https://app.test/bye" ' +
      'startConferenceOnEnter="false" endConferenceOnExit="true" stayAlone="false" ' +
      'waitSound="https://app.test/wait" maxMembers="3" timeLimit="60" hangupOnStar="true" ' +
      'action="https://app.test/after" method="GET" redirect="false" ' +
      'callbackUrl="https://app.test/events" callbackMethod="GET" digitsMatch="#0, 99,000" ' +
      'relayDTMF="false" record="true" recordFileFormat="wav" recordWhenAlone="true">room</Conference>';
    expect(conference(xml)).toMatchObject({
      muted: true,
      enterSound: { kind: 'beep', count: 2 },
      exitSound: { kind: 'url', url: 'https://app.test/bye' },
      startConferenceOnEnter: false,
      endConferenceOnExit: true,
      stayAlone: false,
      waitSound: 'https://app.test/wait',
      maxMembers: 3,
      timeLimit: 60,
      hangupOnStar: true,
      action: 'https://app.test/after',
      method: 'GET',
      redirect: false,
      callbackUrl: 'https://app.test/events',
      callbackMethod: 'GET',
      digitsMatch: ['#0', '99', '000'],
      relayDTMF: false,
      record: true,
      recordFileFormat: 'wav',
      recordWhenAlone: true,
    });
  });

  it.each([
    ['<Conference/>', 'Conference: text (the conference room name) is required'],
    [`<Conference>${'r'.repeat(129)}</Conference>`, 'at most 128 characters, got 129'],
    ['<Conference>a/b</Conference>', 'may not hold "/"'],
    ['<Conference maxMembers="0">r</Conference>', 'maxMembers must be an integer from 1 to 100'],
    ['<Conference maxMembers="101">r</Conference>', 'maxMembers must be an integer from 1 to 100'],
    ['<Conference enterSound="beep:3">r</Conference>', 'enterSound must be "", "beep:1", "beep:2"'],
    ['<Conference recordFileFormat="ogg">r</Conference>', 'recordFileFormat must be mp3 or wav'],
    ['<Conference digitsMatch="1a">r</Conference>', 'digitsMatch must be digit sequences'],
    ['<Conference colour="red">r</Conference>', 'attribute "colour" is not allowed'],
  ])('refuses %s', (xml, message) => {
    expect(() => conference(xml)).toThrow(message);
  });
});
