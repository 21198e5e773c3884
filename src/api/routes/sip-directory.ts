import type { RouteModule } from '../api-context.js';
import { endpointRoutes } from './endpoints.js';
import { originationUriRoutes } from './origination-uris.js';
import { tokenRoutes } from './tokens.js';
import { trunkRoutes } from './trunks.js';

/** SIP endpoints, client access tokens, origination URIs and the inbound trunks that use them. */
export const sipDirectoryRoutes: RouteModule = (app, context) => {
  endpointRoutes(app, context);
  tokenRoutes(app, context);
  originationUriRoutes(app, context);
  trunkRoutes(app, context);
};
