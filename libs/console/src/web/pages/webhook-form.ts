import { revealSecret } from '../components/dialog';
import { field, FormErrors, input, select } from '../components/form';
import { toast } from '../components/toast';
import { alertBox, busy, button, card, linkButton, pageHeader, skeleton } from '../components/ui';
import { api } from '../lib/api';
import { h, replace, uid } from '../lib/dom';
import { humanize } from '../lib/messages';
import { navigate, PageContext } from '../lib/router';
import { EVENT_TYPES, EventType, Webhook, WebhookFilters, WebhookInput } from '../lib/types';
import { planNotice } from './webhooks';

const EVENT_HELP: Record<EventType, string> = {
  'auction.created': 'A listing is first seen on a platform.',
  'auction.updated': 'Price, status, bid count or another meaningful field changes.',
  'auction.ended': 'An auction closes: sold, reserve not met, canceled or withdrawn.',
  'bid.created': 'A new bid is recorded on an auction.',
};

/** The sample payload of each event type, from the event catalog's schema (`examples` of each definition). */
async function eventSamples(): Promise<Partial<Record<EventType, unknown>>> {
  const res = await fetch('/schemas/events.json', { credentials: 'omit' });
  if (!res.ok) return {};
  const schema = (await res.json()) as { $defs?: Record<string, { examples?: unknown[] }> };
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, schema.$defs?.[type]?.examples?.[0]]).filter(([, sample]) => sample !== undefined));
}

class LoadFailure {
  constructor(readonly error: unknown) {}
}

export function newWebhookPage(context: PageContext): Node {
  return webhookFormPage(context, null);
}

export function editWebhookPage(context: PageContext): Node {
  return webhookFormPage(context, context.params.id ?? '');
}

function webhookFormPage(context: PageContext, id: string | null): Node {
  const body = h('div', null, card({}, skeleton(6)));
  const root = h(
    'div',
    { class: 'page page-narrow' },
    pageHeader(id ? 'Edit endpoint' : 'Add an endpoint', {
      back: id ? { label: 'Endpoint', to: `webhooks/${id}` } : { label: 'Webhooks', to: 'webhooks' },
      description: id
        ? 'Changing the URL, the events or the filters applies to events observed from now on.'
        : 'The endpoint receives events observed from now on. You get its signing secret once, right after saving.',
    }),
    id ? null : planNotice(),
    body,
  );
  void (async () => {
    // The pickers are a convenience: without them the form still works (any make, any source).
    const [makes, sources, samples, existing] = await Promise.all([
      api.makes().catch(() => [] as string[]),
      api.sources().catch(() => [] as { value: string; label: string }[]),
      eventSamples().catch(() => ({})),
      id ? api.webhook(id).then((r) => r.data, (error: unknown) => new LoadFailure(error)) : Promise.resolve(null),
    ]);
    if (context.signal.aborted) return;
    if (existing instanceof LoadFailure) return replace(body, alertBox(humanize(existing.error, 'load the endpoint')));
    replace(body, form(existing, makes, sources, samples));
  })();
  return root;
}

function form(existing: Webhook | null, makes: string[], sources: { value: string; label: string }[], samples: Partial<Record<EventType, unknown>>): HTMLElement {
  const filters: WebhookFilters = existing?.filters ?? {};
  const url = field('Endpoint URL', input('url', { type: 'url', value: existing?.url ?? '', placeholder: 'https://example.com/webhooks/cars', autocomplete: 'off', required: true, spellcheck: 'false' }), {
    hint: 'A public HTTPS address on port 443. Answer with any 2xx within 10 seconds. Each delivery is one event; see its sample below the event.',
  });
  const description = field('Description', h('textarea', { class: 'input', name: 'description', rows: '2', maxlength: '500', value: existing?.description ?? '', placeholder: 'What this endpoint is for' }), {
    optional: true,
  });

  const eventsId = uid('events');
  const eventsError = h('p', { class: 'field-error', id: `${eventsId}-error`, hidden: true });
  const selected = new Set<string>(existing?.event_types ?? ['auction.ended']);
  const checkboxes = EVENT_TYPES.map((type) => {
    const box = h('input', { type: 'checkbox', name: 'event_types', value: type, checked: selected.has(type), id: uid('ev') });
    const card = h('label', { class: 'check-card', htmlFor: box.id }, box, h('span', { class: 'check-text' }, h('code', { class: 'mono strong' }, type), h('span', { class: 'muted small' }, EVENT_HELP[type])));
    const sample = samples[type];
    const example =
      sample === undefined
        ? null
        : h('details', { class: 'event-sample', dataset: { sample: type } }, h('summary', null, `Sample ${type} payload`), h('pre', { class: 'mono' }, JSON.stringify(sample, null, 2)));
    return { type, box, element: h('div', { class: 'check-item' }, card, example) };
  });
  const events = h(
    'fieldset',
    { class: 'fieldset', 'aria-describedby': `${eventsId}-error` },
    h('legend', { class: 'field-label' }, 'Events to send'),
    h('div', { class: 'check-grid' }, checkboxes.map((c) => c.element)),
    h(
      'p',
      { class: 'muted small' },
      'Every payload follows the event catalog (',
      h('a', { href: '/schemas/events.json' }, 'JSON Schema'),
      '). Ids are strings; auction_end_at is the platform’s wall-clock time, without an offset.',
    ),
    eventsError,
  );

  const makeOptions = [{ value: '', label: 'Any make' }, ...makes.map((m) => ({ value: m, label: m }))];
  if (filters.make && !makes.some((m) => m.toLowerCase() === filters.make?.toLowerCase())) makeOptions.push({ value: filters.make, label: filters.make });
  const make = field('Make', select('make', makeOptions, makes.find((m) => m.toLowerCase() === filters.make?.toLowerCase()) ?? filters.make ?? ''), { optional: true });
  const sourceOptions = [{ value: '', label: 'Any platform' }, ...sources];
  if (filters.source && !sources.some((s) => s.value.toLowerCase() === filters.source?.toLowerCase())) sourceOptions.push({ value: filters.source, label: filters.source });
  const source = field('Auction platform', select('source', sourceOptions, sources.find((s) => s.value.toLowerCase() === filters.source?.toLowerCase())?.value ?? filters.source ?? ''), { optional: true });
  const auctionId = field('Auction id', input('auction_id', { inputmode: 'numeric', pattern: '[1-9][0-9]*', value: filters.auction_id ?? '', placeholder: 'e.g. 48213', autocomplete: 'off' }), {
    optional: true,
    hint: 'Only events of this one auction.',
  });

  const errors = new FormErrors({ url, description, make, source, auction_id: auctionId });
  const submit = button(existing ? 'Save changes' : 'Create endpoint', { type: 'submit', variant: 'primary' });
  const element = h(
    'form',
    { class: 'form card', novalidate: true },
    errors.banner,
    h('div', { class: 'form-section' }, url.element, description.element),
    h('div', { class: 'form-section' }, events),
    h(
      'div',
      { class: 'form-section' },
      h('h2', { class: 'section-title' }, 'Filters'),
      h('p', { class: 'muted small' }, 'Combined with AND. Leave a filter empty to receive everything.'),
      h('div', { class: 'form-row' }, make.element, source.element),
      auctionId.element,
    ),
    h('div', { class: 'form-actions' }, linkButton('Cancel', existing ? `webhooks/${existing.id}` : 'webhooks', { variant: 'ghost' }), submit),
  );

  element.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    eventsError.hidden = true;
    const chosen = checkboxes.filter((c) => c.box.checked).map((c) => c.type);
    if (!url.control.value.trim()) return errors.invalid('url', 'Enter the URL events are sent to.');
    if (chosen.length === 0) {
      eventsError.textContent = 'Choose at least one event.';
      eventsError.hidden = false;
      checkboxes[0]?.box.focus();
      return;
    }
    const id = auctionId.control.value.trim();
    if (id && !/^[1-9][0-9]*$/.test(id)) return errors.invalid('auction_id', 'An auction id is a whole number, like 48213.');
    const nextFilters: WebhookFilters = {};
    if (make.control.value) nextFilters.make = make.control.value;
    if (source.control.value) nextFilters.source = source.control.value;
    if (id) nextFilters.auction_id = id;
    const payload: WebhookInput = { url: url.control.value.trim(), description: description.control.value.trim(), event_types: chosen, filters: nextFilters };
    void busy(submit, async () => {
      try {
        if (existing) {
          await api.updateWebhook(existing.id, payload);
          toast('Your changes apply to events observed from now on.', 'success', 'Endpoint updated');
          navigate(`webhooks/${existing.id}`);
        } else {
          const created = await api.createWebhook(payload);
          await revealSecret({
            title: 'Endpoint created — your signing secret',
            intro: 'Verify every delivery with this secret (Standard Webhooks: the webhook-signature header). It is shown only now; you can rotate it later.',
            value: created.secret,
            label: 'signing secret',
          });
          navigate(`webhooks/${created.data.id}`);
        }
      } catch (error) {
        errors.show(error, existing ? 'save the endpoint' : 'create the endpoint');
      }
    });
  });
  return element;
}
