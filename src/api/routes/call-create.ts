import { Type, type TSchema } from 'typebox';
import type { CallLauncher } from '../../call/call-launcher.js';
import {
  OUTBOUND_CALL_PARAMETERS,
  parseOutboundCallRequest,
  type OutboundCallParameter,
} from '../../call/outbound-request.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { refuseOutboundUrls } from '../outbound-urls.js';
import { AuthIdParams, errorResponses } from '../schemas.js';

/** The schema of one parameter: its type, its range or values, and its rule as description. */
function parameterSchema(parameter: OutboundCallParameter): TSchema {
  const description = parameter.rule;
  if (parameter.values) {
    return Type.Union(
      parameter.values.map((value) => Type.Literal(value)),
      { description },
    );
  }
  switch (parameter.type) {
    case 'integer':
      return Type.Integer({
        description,
        minimum: parameter.minimum,
        maximum: parameter.maximum,
      });
    case 'boolean':
      return Type.Boolean({ description });
    case 'string':
      return Type.String({ description });
  }
}

/**
 * The body schema, for /docs and the first pass (types, ranges, values, required parameters);
 * parseOutboundCallRequest then checks the formats and the rules between parameters, with the
 * same messages.
 */
const CreateCallBody = Type.Object(
  Object.fromEntries(
    Object.entries(OUTBOUND_CALL_PARAMETERS).map(([name, parameter]) => {
      const schema = parameterSchema(parameter);
      return [name, 'required' in parameter ? schema : Type.Optional(schema)];
    }),
  ),
  {
    required: Object.entries(OUTBOUND_CALL_PARAMETERS)
      .filter(([, parameter]) => 'required' in parameter)
      .map(([name]) => name),
  },
);

const CallFiredBody = Type.Object({
  message: Type.String(),
  request_uuid: Type.String(),
  api_id: Type.String(),
});

/**
 * `POST /v1/Account/{auth_id}/Call/`: validates the request and hands it to the launcher, which
 * places the calls. Registered in the authenticated scope of the REST API as
 * `(scope, context) => callCreateRoutes(scope, context, launcher)`.
 */
export function callCreateRoutes(app: TypedApp, context: ApiContext, launcher: CallLauncher): void {
  app.post('/v1/Account/:auth_id/Call/', {
    schema: {
      tags: ['Call'],
      summary: 'Make an outbound call',
      params: AuthIdParams,
      body: CreateCallBody,
      response: { 201: CallFiredBody, ...errorResponses(400, 401, 422) },
    },
    handler: async (request, reply) => {
      const outbound = parseOutboundCallRequest(request.body);
      await refuseOutboundUrls(context.outbound, {
        answer_url: outbound.answerUrl,
        ring_url: outbound.ringUrl,
        hangup_url: outbound.hangupUrl,
        fallback_url: outbound.fallbackUrl,
        machine_detection_url: outbound.machineDetectionUrl,
      });
      const { authId, tenant, isMain } = request.principal;
      const { requestUuid } = await launcher.fire({ authId, tenant, isMain }, outbound, request.ip);
      reply.code(201);
      return { message: 'call fired', request_uuid: requestUuid, api_id: request.id };
    },
  });
}
