// Items out of a feed's text, streaming: saxes (docs/decisions.md "XML feed parser") fed
// chunk by chunk; nothing but the item being read is kept. An item is the first element the
// document's structure makes one (feed-format.ts isItemName: product, item, offer, SHOPITEM,
// feed/entry, offers/o — names matched case-sensitively, so a field is never an item) and
// every later element of the same name under a parent of the same name. Its tags are its own
// attributes, then its child elements (text content) and their attributes (`child@attr`),
// grandchildren as `child/grandchild` (with `child/grandchild@attr`, and
// `child/grandchild[name]` for one carrying a `name` attribute, as Ceneo's `attrs/a`).
//
// Hostile input stops the parse with a FeedError (line and column): a DOCTYPE declaring
// entities (XXE, billion laughs — nothing is expanded or fetched, saxes knows only the five
// predefined entities anyway), one construct (a text node, a comment, a DOCTYPE) longer than
// MAX_CONSTRUCT_CHARS that saxes would have to buffer whole, or nesting deeper than MAX_DEPTH.
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { detectDialect, GOOGLE_NS, isItemName, tagKey, type Dialect } from './feed-format.js';

/** An expected failure of a feed (malformed, hostile, too big, unreachable), with its position when known. */
export class FeedError extends Error {
  constructor(
    readonly key: string,
    readonly params: Record<string, string | number> = {},
    readonly line: number | null = null,
    readonly column: number | null = null,
  ) {
    super(key);
    this.name = 'FeedError';
  }
}

export interface RawItem {
  /** Line of the item's start tag. */
  line: number;
  column: number;
  /** 1-based index of the item in the feed (set when the item is complete). */
  index: number;
  /** Tag (lower-case; `child/grandchild` for nested) → values in document order. */
  tags: Map<string, string[]>;
  /** Over MAX_ITEM_CHARS of text: the values are incomplete and the item is refused. */
  oversize: boolean;
}

/** A category defined outside the items (YML `categories/category[@id,@parentId]`). */
export interface CategoryDefinition {
  id: string;
  parentId: string | null;
  name: string;
  line: number;
}

export interface FeedParserHandlers {
  item(item: RawItem): void;
  category?(definition: CategoryDefinition): void;
  /** Once the item element is found (the dialect is known), before the first item. */
  root?(dialect: Dialect): void;
}

/** Text an item may carry in all (1 MiB): more is refused, and not kept. */
export const MAX_ITEM_CHARS = 1024 * 1024;
/** Characters saxes may hold for one construct before the feed is refused (memory bound). */
export const MAX_CONSTRUCT_CHARS = 8 * 1024 * 1024;
const MAX_DEPTH = 64;
const MAX_DISTINCT_TAGS = 200;
/**
 * Prefixes bound to Google's namespace that are kept in scope at once. Only those matter (the
 * parser reads no other namespace), and declarations are undone when their element closes, so
 * a feed of millions of `xmlns:` declarations holds no more than this.
 */
export const MAX_GOOGLE_PREFIXES = 32;

const ENTITY_DECLARATION = /<!ENTITY/i;
/** "12:7: unexpected close tag." → "unexpected close tag" */
const stripPosition = (message: string) => message.replace(/^(?:[^:]*:)?\d+:\d+: /, '').replace(/\.$/, '');

/** The saxes handler fields FeedParser sets (saxes's EVENT_NAME_TO_HANDLER_NAME). */
type HandlerField = 'errorHandler' | 'doctypeHandler' | 'openTagHandler' | 'closeTagHandler' | 'textHandler' | 'cdataHandler' | 'commentHandler' | 'piHandler' | 'xmldeclHandler';

/**
 * saxes with its handler fields declared up front. saxes's `on()` adds each handler as a
 * property under a computed key; past a dozen such additions V8 turns the parser into a
 * dictionary-mode object, and every field read of its per-character loop (`getCode10`:
 * chunk, i, line, column) becomes a hash lookup — the parse ran 5 × slower than the same
 * saxes with three handlers. Fields that exist before `on()` keep the object's shape fast.
 */
export class ShapedSaxesParser extends SaxesParser {
  constructor() {
    super({ position: true });
    const self = this as unknown as Record<HandlerField, undefined>;
    self.errorHandler = undefined;
    self.doctypeHandler = undefined;
    self.openTagHandler = undefined;
    self.closeTagHandler = undefined;
    self.textHandler = undefined;
    self.cdataHandler = undefined;
    self.commentHandler = undefined;
    self.piHandler = undefined;
    self.xmldeclHandler = undefined;
  }
}

export class FeedParser {
  private readonly parser: SaxesParser = new ShapedSaxesParser();
  private readonly names: string[] = [];
  /** Prefixes in scope that are bound to Google's namespace (at most MAX_GOOGLE_PREFIXES). */
  private readonly googlePrefixes = new Set<string>();
  /** Per open element (parallel to `names`): the Google bindings it changed, to undo at its close. */
  private readonly scopes: Array<Array<[prefix: string, wasGoogle: boolean]> | undefined> = [];
  private dialect: Dialect = 'generic';
  private rootName = '';
  /** Google's namespace was declared on the root element. */
  private rootGoogle = false;
  /** The item element as first found: its name and its parent's name. */
  private itemName: string | undefined;
  private itemParent: string | null | undefined;
  private item: RawItem | undefined;
  private itemDepth = 0;
  private itemChars = 0;
  private child: { key: string; text: string; nested: boolean } | undefined;
  private grandchild: { key: string; text: string } | undefined;
  private categoryDef: { id: string; parentId: string | null; text: string; line: number } | undefined;
  private lastEventAt = 0;
  /** Every distinct tag seen in items, with the name as written (for validate). */
  readonly tagNames = new Map<string, string>();
  itemsFound = 0;

  constructor(private readonly handlers: FeedParserHandlers) {
    const p = this.parser;
    p.on('error', (err) => {
      throw new FeedError('catalog.feed_malformed', { detail: stripPosition(err.message) }, p.line, p.column);
    });
    p.on('doctype', (doctype) => {
      this.mark();
      if (ENTITY_DECLARATION.test(doctype)) throw new FeedError('catalog.feed_entities', {}, p.line, p.column);
    });
    p.on('opentag', (node) => this.openTag(node as SaxesTagPlain));
    p.on('closetag', () => this.closeTag());
    p.on('text', (text) => this.text(text));
    p.on('cdata', (text) => this.text(text));
    p.on('comment', () => this.mark());
    p.on('processinginstruction', () => this.mark());
    p.on('xmldecl', () => this.mark());
  }

  /** Namespace bindings the parser holds now (bounded: MAX_GOOGLE_PREFIXES). */
  get namespaceBindings(): number {
    return this.googlePrefixes.size;
  }

  /** The item element as the spec names them ("offers/offer", "item", …), once found. */
  get itemElement(): string | null {
    if (this.itemName === undefined) return null;
    const name = this.local(this.itemName);
    const parent = this.itemParent === null || this.itemParent === undefined ? null : this.local(this.itemParent);
    const paired = parent !== null && (parent.toLowerCase() === `${name.toLowerCase()}s` || name === 'SHOPITEM' || name === 'o' || name === 'entry');
    return paired ? `${parent}/${name}` : name;
  }

  /** The feed's dialect (generic until the item element is found). */
  get feedDialect(): Dialect {
    return this.dialect;
  }

  write(text: string): void {
    this.parser.write(text);
    if (this.parser.position - this.lastEventAt > MAX_CONSTRUCT_CHARS) {
      throw new FeedError('catalog.feed_construct_too_large', { limit: MAX_CONSTRUCT_CHARS }, this.parser.line, this.parser.column);
    }
  }

  /** End of input: an unclosed document is malformed. */
  close(): void {
    this.parser.close();
  }

  private mark(): void {
    this.lastEventAt = this.parser.position;
  }

  private local(name: string): string {
    const colon = name.indexOf(':');
    return colon < 0 ? name : name.slice(colon + 1);
  }

  /** The tag key of an element or attribute name: Google's namespace reads by local name. */
  private key(name: string): string {
    const colon = name.indexOf(':');
    if (colon > 0 && this.googlePrefixes.has(name.slice(0, colon))) return tagKey(name.slice(colon + 1));
    return tagKey(name);
  }

  private noteTag(key: string, name: string): void {
    if (this.tagNames.size < MAX_DISTINCT_TAGS && !this.tagNames.has(key)) this.tagNames.set(key, name);
  }

  private openTag(node: SaxesTagPlain): void {
    this.mark();
    const p = this.parser;
    const names = this.names;
    const parent = names.length > 0 ? names[names.length - 1]! : null;
    names.push(node.name);
    if (names.length > MAX_DEPTH) throw new FeedError('catalog.feed_too_deep', { limit: MAX_DEPTH }, p.line, p.column);
    const attributes = node.attributes as Record<string, string>;
    this.scopes.push(this.declare(attributes));
    if (parent === null) {
      this.rootName = this.local(node.name);
      // Called at the root's open tag, whose declarations are the only ones in scope.
      this.rootGoogle = this.googlePrefixes.size > 0;
    }

    if (this.item) {
      const rel = names.length - this.itemDepth;
      if (rel === 1) {
        this.child = { key: this.key(node.name), text: '', nested: false };
        this.attributeTags(this.child.key, node.name, attributes);
      } else if (rel >= 2 && this.child) this.child.nested = true;
      if (rel === 2 && this.child) {
        const key = `${this.child.key}/${this.key(node.name)}`;
        this.attributeTags(key, `${names[names.length - 2]!}/${node.name}`, attributes);
        const named = attributes.name;
        this.grandchild = { key: named === undefined ? key : `${key}[${tagKey(named.trim().replace(/\s+/g, '_').slice(0, 100))}]`, text: '' };
      }
      return;
    }
    if (this.isItemStart(node.name, parent)) {
      const tags = new Map<string, string[]>();
      for (const name in attributes) {
        if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
        const key = this.key(name);
        this.noteTag(key, name);
        const list = tags.get(key);
        if (list) list.push(attributes[name]!);
        else tags.set(key, [attributes[name]!]);
      }
      this.item = { line: p.line, column: p.column, index: 0, tags, oversize: false };
      this.itemDepth = names.length;
      this.itemChars = 0;
      return;
    }
    if (parent !== null && this.local(node.name).toLowerCase() === 'category' && this.local(parent).toLowerCase() === 'categories') {
      const id = attributes.id;
      if (id !== undefined && id.trim() !== '') {
        const parentId = attributes.parentId ?? attributes.parentid ?? null;
        this.categoryDef = { id: id.trim(), parentId: parentId === null || parentId.trim() === '' ? null : parentId.trim(), text: '', line: p.line };
      }
    }
  }

  /** Applies an element's `xmlns:` declarations; returns what to undo when it closes. */
  private declare(attributes: Record<string, string>): Array<[string, boolean]> | undefined {
    let undo: Array<[string, boolean]> | undefined;
    for (const name in attributes) {
      if (!name.startsWith('xmlns:')) continue;
      const prefix = name.slice(6);
      const isGoogle = attributes[name] === GOOGLE_NS;
      const wasGoogle = this.googlePrefixes.has(prefix);
      if (isGoogle === wasGoogle) continue;
      if (isGoogle && this.googlePrefixes.size >= MAX_GOOGLE_PREFIXES) continue;
      if (isGoogle) this.googlePrefixes.add(prefix);
      else this.googlePrefixes.delete(prefix);
      (undo ??= []).push([prefix, wasGoogle]);
    }
    return undo;
  }

  private undeclare(): void {
    const undo = this.scopes.pop();
    if (!undo) return;
    for (let i = undo.length - 1; i >= 0; i--) {
      const [prefix, wasGoogle] = undo[i]!;
      if (wasGoogle) this.googlePrefixes.add(prefix);
      else this.googlePrefixes.delete(prefix);
    }
  }

  /** A child's or grandchild's attributes as `key@attr` tags (namespace declarations aside). */
  private attributeTags(key: string, name: string, attributes: Record<string, string>): void {
    for (const attr in attributes) {
      if (attr === 'xmlns' || attr.startsWith('xmlns:')) continue;
      const value = attributes[attr]!;
      this.itemChars += value.length;
      if (this.itemChars > MAX_ITEM_CHARS) {
        this.item!.oversize = true;
        return;
      }
      this.push(`${key}@${this.key(attr)}`, `${name}@${attr}`, value);
    }
  }

  private isItemStart(name: string, parent: string | null): boolean {
    if (this.itemName === undefined) {
      const local = this.local(name);
      if (!isItemName(local, parent === null ? null : this.local(parent))) return false;
      this.itemName = name;
      this.itemParent = parent;
      this.dialect = detectDialect(this.rootName, local, this.rootGoogle || this.googlePrefixes.size > 0);
      this.handlers.root?.(this.dialect);
      return true;
    }
    return name === this.itemName && parent === this.itemParent;
  }

  private text(text: string): void {
    this.mark();
    if (this.item) {
      if (!this.child || this.item.oversize) return;
      this.itemChars += text.length;
      if (this.itemChars > MAX_ITEM_CHARS) {
        this.item.oversize = true;
        return;
      }
      this.child.text += text;
      if (this.grandchild) this.grandchild.text += text;
    } else if (this.categoryDef) {
      if (this.categoryDef.text.length < 10_000) this.categoryDef.text += text;
    }
  }

  private push(key: string, name: string, text: string): void {
    if (this.item!.oversize) return;
    const value = text.trim();
    if (value === '') return;
    this.noteTag(key, name);
    const tags = this.item!.tags;
    const list = tags.get(key);
    if (list) list.push(value);
    else tags.set(key, [value]);
  }

  private closeTag(): void {
    this.mark();
    const names = this.names;
    const name = names[names.length - 1]!;
    if (this.item) {
      const rel = names.length - this.itemDepth;
      if (rel === 2 && this.grandchild) {
        const parentName = names[names.length - 2]!;
        this.push(this.grandchild.key, `${parentName}/${name}`, this.grandchild.text);
        this.grandchild = undefined;
      } else if (rel === 1 && this.child) {
        // An element with elements inside reads as their text, white space collapsed.
        this.push(this.child.key, name, this.child.nested ? this.child.text.replace(/\s+/g, ' ') : this.child.text);
        this.child = undefined;
      } else if (rel === 0) {
        const item = this.item;
        this.item = undefined;
        this.itemsFound++;
        item.index = this.itemsFound;
        names.pop();
        this.undeclare();
        this.handlers.item(item);
        return;
      }
    } else if (this.categoryDef && this.local(name).toLowerCase() === 'category') {
      const def = this.categoryDef;
      this.categoryDef = undefined;
      // A category name is single-line text: white space collapsed (DESIGN.md §9).
      const text = def.text.replace(/\s+/g, ' ').trim();
      if (text !== '') this.handlers.category?.({ id: def.id, parentId: def.parentId, name: text, line: def.line });
    }
    names.pop();
    this.undeclare();
  }
}
