/**
 * One registry of error codes. Every error the gateway reports to a client is an ApiError with
 * one of these codes; the HTTP layer maps the code to a status and the wire envelope
 * `{"api_id": "...", "error": "<message>"}`.
 */
export const ERROR_STATUS = {
  invalid_parameter: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  missing_parameter: 422,
  rate_limited: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const invalidParameter = (message: string): ApiError =>
  new ApiError('invalid_parameter', message);
export const missingParameter = (message: string): ApiError =>
  new ApiError('missing_parameter', message);
export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found`);
export const conflict = (message: string): ApiError => new ApiError('conflict', message);
export const unauthorized = (message: string): ApiError => new ApiError('unauthorized', message);

/** A uniqueness rule of the state layer was broken (a username or number already taken). */
export class UniqueViolation extends Error {
  constructor(
    readonly space: string,
    readonly value: string,
  ) {
    super(`${space} ${value} is already taken`);
    this.name = 'UniqueViolation';
  }
}

/**
 * The shared state (Redis) cannot be reached or did not answer in time: the request may be
 * tried again shortly. The HTTP layer answers 503 with the message and logs the detail (which
 * may name servers and addresses a client has no business seeing).
 */
export class StoreUnavailable extends Error {
  constructor(readonly detail: string) {
    super('the state store (Redis) is unavailable; try again in a few seconds');
    this.name = 'StoreUnavailable';
  }
}
