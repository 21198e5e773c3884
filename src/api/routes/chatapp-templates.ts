import { Type } from 'typebox';
import { invalidParameter, notFound } from '../../core/errors.js';
import { parseTemplateDraft } from '../../messaging/chatapp/template-rules.js';
import type { ChatAppAccountRecord, ChatAppTemplateRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { findVisible } from '../owned-resources.js';
import { errorResponses, ListQuery, Nullable } from '../schemas.js';

const BizParams = Type.Object({ auth_id: Type.String(), biz_account_id: Type.String() });
const TemplateParams = Type.Object({
  auth_id: Type.String(),
  biz_account_id: Type.String(),
  template_id: Type.String(),
});

/** The body is checked by the template rules, which name the component and the rule. */
const DraftBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'name, language, category, components (at least a BODY) and allow_category_change, as the messaging document describes',
});

const Action = Type.Object({
  api_id: Type.String(),
  status: Type.String(),
  message: Type.String(),
  template_id: Type.String(),
  template_name: Type.String(),
  template_status: Type.String(),
  template_language: Type.String(),
  template_category: Type.String(),
});

const Summary = Type.Object({
  template_id: Type.String(),
  name: Type.String(),
  language: Type.String(),
  category: Type.String(),
  status: Type.String(),
});

const Template = Type.Object({
  api_id: Type.String(),
  template_id: Type.String(),
  name: Type.String(),
  language: Type.String(),
  category: Type.String(),
  status: Type.String(),
  quality_score: Nullable(Type.Object({ score: Type.String() })),
  rejected_reason: Type.String(),
  components: Type.Array(Type.Unknown()),
});

const List = Type.Object({
  api_id: Type.String(),
  status: Type.String(),
  meta: Type.Object({
    limit: Type.Number(),
    offset: Type.Number(),
    total_count: Type.Number(),
    next: Nullable(Type.String()),
    previous: Nullable(Type.String()),
  }),
  objects: Type.Array(Summary),
});

/**
 * Chat-app templates of one business account (`ChatApp/Template/{biz_account_id}/`), as the
 * messaging document describes them. Each change goes upstream first: what upstream refuses
 * or does not answer is a 502 and changes nothing here.
 */
export function chatAppTemplateRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, chatAppTemplates } = context;
  const tags = ['Chat-app template'];
  const base = '/v1/Account/:auth_id/ChatApp/Template/:biz_account_id/';

  const findAccount = (principal: Principal, id: string): Promise<ChatAppAccountRecord> =>
    findVisible(state.chatAppAccounts, principal, id, 'business account');
  const findTemplate = async (account: ChatAppAccountRecord, id: string) => {
    const found = await state.chatAppTemplates.get(account.account, id);
    if (!found || found.biz_account_id !== account.biz_account_id) throw notFound(`template ${id}`);
    return found;
  };
  const action = (apiId: string, message: string, t: ChatAppTemplateRecord) => ({
    api_id: apiId,
    status: 'success',
    message,
    template_id: t.template_id,
    template_name: t.name,
    template_status: t.status,
    template_language: t.language,
    template_category: t.category,
  });

  app.post(base, {
    schema: {
      tags,
      summary: 'Create a chat-app template',
      params: BizParams,
      body: DraftBody,
      response: { 200: Action, ...errorResponses(400, 401, 404, 409, 422, 502) },
    },
    handler: async (request) => {
      const account = await findAccount(request.principal, request.params.biz_account_id);
      const draft = parseTemplateDraft(request.body);
      const created = await chatAppTemplates.create(account, draft);
      return action(request.id, 'template created and submitted for review', created);
    },
  });

  app.get(base, {
    schema: {
      tags,
      summary: 'List chat-app templates',
      params: BizParams,
      querystring: Type.Intersect([
        ListQuery,
        Type.Object({
          template_name: Type.Optional(Type.String({ description: 'text the name contains' })),
        }),
      ]),
      response: { 200: List, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const account = await findAccount(request.principal, request.params.biz_account_id);
      const { limit, offset, template_name } = request.query;
      const needle = template_name?.toLowerCase();
      const all = (
        await state.chatAppTemplates.all(account.account, `biz:${account.biz_account_id}`)
      )
        .filter((t) => !needle || t.name.toLowerCase().includes(needle))
        .sort((a, b) => b.created - a.created || a.template_id.localeCompare(b.template_id));
      const page = all.slice(offset, offset + limit).map((t) => ({
        template_id: t.template_id,
        name: t.name,
        language: t.language,
        category: t.category,
        status: t.status,
      }));
      return {
        ...uris.list(request, { limit, offset, total: all.length }, page),
        status: 'success',
      };
    },
  });

  app.get(`${base}:template_id/`, {
    schema: {
      tags,
      summary: 'Retrieve a chat-app template',
      params: TemplateParams,
      response: { 200: Template, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const account = await findAccount(request.principal, request.params.biz_account_id);
      const t = await findTemplate(account, request.params.template_id);
      return {
        api_id: request.id,
        template_id: t.template_id,
        name: t.name,
        language: t.language,
        category: t.category,
        status: t.status,
        quality_score: t.quality_score,
        rejected_reason: t.rejected_reason,
        components: t.components,
      };
    },
  });

  app.post(`${base}:template_id/`, {
    schema: {
      tags,
      summary: 'Update a chat-app template',
      params: TemplateParams,
      body: DraftBody,
      response: { 200: Action, ...errorResponses(400, 401, 404, 422, 502) },
    },
    handler: async (request) => {
      const account = await findAccount(request.principal, request.params.biz_account_id);
      const current = await findTemplate(account, request.params.template_id);
      const draft = parseTemplateDraft(request.body);
      const updated = await chatAppTemplates.update(account, current, draft);
      return action(request.id, 'template updated and submitted for review', updated);
    },
  });

  app.delete(`${base}:template_id/`, {
    schema: {
      tags,
      summary: 'Delete a chat-app template',
      params: TemplateParams,
      querystring: Type.Object({ name: Type.Optional(Type.String()) }),
      response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 502) },
    },
    handler: async (request, reply) => {
      const { name } = request.query;
      if (!name) throw invalidParameter('name is required: DELETE .../{template_id}/?name={name}');
      const account = await findAccount(request.principal, request.params.biz_account_id);
      const template = await findTemplate(account, request.params.template_id);
      await chatAppTemplates.remove(account, template, name);
      return reply.code(204).send(null);
    },
  });
}
