/**
 * A tiny element builder: `h('button', { class: 'btn', onclick: save }, 'Save')`. No templates
 * and no innerHTML anywhere, so text from the API is always text, and nothing inline needs the
 * Content-Security-Policy relaxed.
 */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

type EventHandlers = {
  [K in keyof HTMLElementEventMap as `on${K}`]?: (event: HTMLElementEventMap[K]) => void;
};

export interface Props extends EventHandlers {
  class?: string | (string | false | null | undefined)[];
  /** Sets `data-*` attributes. */
  dataset?: Record<string, string>;
  /** CSSOM properties (never a style attribute). */
  style?: Partial<Record<'width' | 'height' | 'minWidth' | 'background' | 'color', string>>;
  [attribute: string]: unknown;
}

/** Properties assigned on the element rather than set as attributes. */
const PROPERTIES = new Set(['value', 'checked', 'disabled', 'selected', 'textContent', 'htmlFor', 'indeterminate', 'open']);

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) applyProps(el, props);
  append(el, children);
  return el;
}

function applyProps(el: HTMLElement, props: Props): void {
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : String(value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value as Record<string, string>);
    } else if (key === 'style') {
      Object.assign(el.style, value as Record<string, string>);
    } else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value as EventListener);
    } else if (PROPERTIES.has(key)) {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child as readonly Child[]);
    else parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : (child as Node));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An inline SVG element (icons), built with the DOM like everything else. */
export function svg(tag: string, attributes: Record<string, string | number>, ...children: SVGElement[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  for (const child of children) el.appendChild(child);
  return el;
}

let idCounter = 0;
/** A document-unique id for label/aria wiring. */
export function uid(prefix = 'id'): string {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}
