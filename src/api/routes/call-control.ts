import { Type } from 'typebox';
import {
  isSpeakLanguage,
  languageHasVoice,
  SPEAK_LANGUAGE_VOICES,
  type SpeakVoice,
} from '../../call/xml/speak-voices.js';
import { invalidParameter, notFound } from '../../core/errors.js';
import { MAX_DIGIT_STRING, parseDigitString } from '../../media/dtmf/digit-schedule.js';
import { DtmfParseError } from '../../media/dtmf/dtmf-parse-error.js';
import type { CallConversion } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { AuthIdParams, errorResponses, MessageBody } from '../schemas.js';
import { findCallRecord } from './calls.js';
import { callOwner, notConnected } from './live-calls.js';

const CallParams = Type.Object({ auth_id: Type.String(), call_uuid: Type.String() });
const RequestParams = Type.Object({ auth_id: Type.String(), request_uuid: Type.String() });

const LANGUAGE_RULE = `one of ${Object.keys(SPEAK_LANGUAGE_VOICES).join(', ')}`;
const DIGITS_RULE = `a string of 0-9, *, #, A-D, w (0.5 s wait) and W (1 s wait), at most ${MAX_DIGIT_STRING} characters`;
/** Conversion values are free text; the bound only keeps records small. */
const CONVERSION_MAX = 255;

const Flag = (description: string, fallback: boolean) =>
  Type.Boolean({ description, default: fallback });

/**
 * voice-calls-and-streams.md, Speak text on a call. Booleans arrive as JSON booleans or, in
 * forms, as the strings "true" and "false" (the schema coerces them).
 */
const SpeakBody = Type.Object({
  text: Type.String({ minLength: 1, description: 'a non-empty string' }),
  voice: Type.Optional(
    Type.Union([Type.Literal('MAN'), Type.Literal('WOMAN')], {
      description: 'MAN or WOMAN',
      default: 'WOMAN',
    }),
  ),
  language: Type.Optional(Type.String({ description: LANGUAGE_RULE, default: 'en-US' })),
  legs: Type.Optional(
    Type.Union([Type.Literal('aleg'), Type.Literal('bleg'), Type.Literal('both')], {
      description: 'aleg, bleg or both',
      default: 'aleg',
    }),
  ),
  loop: Type.Optional(Flag('true or false', false)),
  mix: Type.Optional(Flag('true or false', true)),
});

/** voice-calls-and-streams.md, Send DTMF. */
const DtmfBody = Type.Object({
  digits: Type.String({ description: DIGITS_RULE }),
  leg: Type.Optional(
    Type.Union([Type.Literal('aleg'), Type.Literal('bleg')], {
      description: 'aleg or bleg',
      default: 'aleg',
    }),
  ),
});

/** voice-calls-and-streams.md, Call conversion: neither parameter is required. */
const ConversionBody = Type.Object({
  timestamp: Type.Optional(
    Type.String({
      maxLength: CONVERSION_MAX,
      description: `a string of at most ${CONVERSION_MAX} characters`,
    }),
  ),
  status: Type.Optional(
    Type.String({
      maxLength: CONVERSION_MAX,
      description: `a string of at most ${CONVERSION_MAX} characters`,
    }),
  ),
});

/** The voice a Speak request asked for, refused when its language does not offer it. */
function speakVoice(voice: SpeakVoice, language: string): { voice: SpeakVoice; language: string } {
  if (!isSpeakLanguage(language))
    throw invalidParameter(`invalid language: must be ${LANGUAGE_RULE}`);
  if (!languageHasVoice(language, voice)) {
    const offered = SPEAK_LANGUAGE_VOICES[language].join(' or ');
    throw invalidParameter(`invalid voice: must be ${offered} for language ${language}`);
  }
  return { voice, language };
}

/** Checks a DTMF digit string the way the media worker will read it. */
function checkDigits(digits: string): void {
  try {
    parseDigitString(digits);
  } catch (error) {
    if (error instanceof DtmfParseError)
      throw invalidParameter(`invalid digits: must be ${DIGITS_RULE}`);
    throw error;
  }
}

/**
 * Control of calls in progress: hang up one, all, or a request's; speak and stop speaking;
 * send digits; report a conversion. Every route acts only on calls the account sees (a main
 * account sees its subaccounts' calls); any other uuid is 404.
 */
export function callControlRoutes(app: TypedApp, context: ApiContext): void {
  const { control } = context;

  /** wire-compat.md: 204, and 404 for an unknown call or one that is already over. */
  app.delete('/v1/Account/:auth_id/Call/:call_uuid/', {
    schema: {
      tags: ['Call'],
      summary: 'Hang up a call',
      params: CallParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const { call_uuid } = request.params;
      if (!(await control.hangup(callOwner(request.principal), call_uuid))) {
        throw notFound(`call ${call_uuid}`);
      }
      return reply.code(204).send(null);
    },
  });

  /** Ends every ongoing (and queued) call the account sees; 204 even when there is none. */
  app.delete('/v1/Account/:auth_id/Call/', {
    schema: {
      tags: ['Call'],
      summary: 'Hang up every call',
      params: AuthIdParams,
      response: { 204: Type.Null(), ...errorResponses(401) },
    },
    handler: async (request, reply) => {
      await control.hangupAll(callOwner(request.principal));
      return reply.code(204).send(null);
    },
  });

  /** Ends what is left of a create-call request: its queued and ongoing calls. */
  app.delete('/v1/Account/:auth_id/Request/:request_uuid/', {
    schema: {
      tags: ['Call'],
      summary: 'Cancel a call request',
      params: RequestParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const { request_uuid } = request.params;
      if ((await control.cancelRequest(callOwner(request.principal), request_uuid)) === 0)
        throw notFound('request');
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/Account/:auth_id/Call/:call_uuid/Speak/', {
    schema: {
      tags: ['Call'],
      summary: 'Speak text on a call',
      params: CallParams,
      body: SpeakBody,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404, 409, 422) },
    },
    handler: async (request) => {
      const { call_uuid } = request.params;
      const body = request.body;
      const { voice, language } = speakVoice(body.voice ?? 'WOMAN', body.language ?? 'en-US');
      const started = await control.speak(callOwner(request.principal), call_uuid, {
        legs: body.legs ?? 'aleg',
        text: body.text,
        voice,
        language,
        loop: body.loop ?? false,
        mix: body.mix ?? true,
      });
      if (started === 'not-found') throw notFound(`call ${call_uuid}`);
      if (started === 'no-b-leg') throw noBLeg('legs');
      if (started === 'not-connected') throw notConnected(call_uuid, body.legs);
      return { message: 'speak started', api_id: request.id };
    },
  });

  app.delete('/v1/Account/:auth_id/Call/:call_uuid/Speak/', {
    schema: {
      tags: ['Call'],
      summary: 'Stop speaking text on a call',
      params: CallParams,
      response: { 200: MessageBody, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const { call_uuid } = request.params;
      if ((await control.stopSpeaking(callOwner(request.principal), call_uuid)) === 'not-found') {
        throw notFound(`call ${call_uuid}`);
      }
      return { message: 'speak stopped', api_id: request.id };
    },
  });

  app.post('/v1/Account/:auth_id/Call/:call_uuid/DTMF/', {
    schema: {
      tags: ['Call'],
      summary: 'Send DTMF digits on a call',
      params: CallParams,
      body: DtmfBody,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404, 409, 422) },
    },
    handler: async (request) => {
      const { call_uuid } = request.params;
      checkDigits(request.body.digits);
      const sent = await control.sendDigits(
        callOwner(request.principal),
        call_uuid,
        request.body.digits,
        request.body.leg ?? 'aleg',
      );
      if (sent === 'not-found') throw notFound(`call ${call_uuid}`);
      if (sent === 'no-b-leg') throw noBLeg('leg');
      if (sent === 'not-connected') throw notConnected(call_uuid, request.body.leg);
      return { message: 'digits sent', api_id: request.id };
    },
  });

  app.post('/v1/Account/:auth_id/Call/:call_uuid/Conversion/', {
    schema: {
      tags: ['Call'],
      summary: 'Record a call conversion',
      params: CallParams,
      body: ConversionBody,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const conversion: CallConversion = {
        timestamp: request.body.timestamp ?? null,
        status: request.body.status ?? null,
      };
      await recordConversion(context, request.principal, request.params.call_uuid, conversion);
      return { message: 'conversion recorded', api_id: request.id };
    },
  });
}

/**
 * Keeps a conversion with the call: on the live call, whose record takes it when the call
 * ends, or on the record of a call already over. A call that ends while this runs gets it on
 * its record too.
 */
async function recordConversion(
  context: ApiContext,
  principal: Principal,
  callUuid: string,
  conversion: CallConversion,
): Promise<void> {
  if ((await context.control.convert(callOwner(principal), callUuid, conversion)) === 'live')
    return;
  const record = await findCallRecord(context, principal, callUuid);
  const same =
    record.conversion?.timestamp === conversion.timestamp &&
    record.conversion.status === conversion.status;
  if (!same) await context.state.calls.update({ ...record, conversion }, record);
}

/** legs=bleg (or leg=bleg) on a call that has no party connected by Dial. */
const noBLeg = (field: string) =>
  invalidParameter(`invalid ${field}: the call has no B leg (no Dial connected)`);
