/** An Ajv error as Fastify reports it (Ajv runs with `verbose` so parentSchema is present). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: { description?: string; minLength?: number; maxLength?: number };
}

/**
 * Turns the first schema error into the client's message. A missing required parameter is a 422
 * (wire-compat.md); any other rule is a 400 whose message names the field and the rule, taken
 * from the field's schema description so the rule reads the same here and in /docs.
 */
export function validationMessage(
  errors: SchemaError[],
  context: string,
): { status: number; message: string } {
  const first = errors[0];
  if (!first) return { status: 400, message: `invalid ${context}` };
  // A union (an enum of literals, a nullable) fails in every branch; its own anyOf error
  // carries the field's description, so that is the one to report.
  const error =
    errors.find((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath) ?? first;
  if (error.keyword === 'required') {
    return {
      status: 422,
      message: `missing required parameter: ${String(error.params.missingProperty)}`,
    };
  }
  const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || context;
  const rule = error.parentSchema?.description ?? ruleOf(error);
  return { status: 400, message: `invalid ${field}: must be ${rule}` };
}

function ruleOf(error: SchemaError): string {
  const p = error.params;
  switch (error.keyword) {
    case 'type':
      return `of type ${String(p.type)}`;
    case 'enum':
      return `one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'minimum':
      return `at least ${String(p.limit)}`;
    case 'maximum':
      return `at most ${String(p.limit)}`;
    case 'minLength':
      return `at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `at most ${String(p.limit)} characters`;
    default:
      return (error.message ?? 'valid').replace(/^must be /, '');
  }
}
