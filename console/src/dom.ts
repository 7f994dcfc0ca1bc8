// Building the page from code: elements, attributes and text nodes only. Nothing here parses markup
// (no innerHTML; the page's CSP refuses such sinks), so text from a chat is always shown as text.
type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined>;

function apply(node: Element, attributes: Attributes, children: Child[]): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'number' ? String(child) : child);
  }
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  apply(node, attributes, children);
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  apply(node, attributes, children);
  return node;
}

/** The element with this id, of this type, or an error naming it (the page and the code disagree). */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return node;
}

/** A score as the console writes it: three decimals, as the API's figures are read. */
export const fixed = (x: number): string => x.toFixed(3);

/** A rise or fall of the running score, always signed. */
export const signed = (x: number): string => `${x >= 0 ? '+' : '\u2212'}${Math.abs(x).toFixed(3)}`;

/** The CSS class of a band: `band-critical`, `band-high-risk`, ... */
export const bandClass = (level: string): string => `band-${level.toLowerCase().replace(/\s+/g, '-')}`;
