// The browser tests run a few lines inside the page (page.evaluate); the server's TypeScript
// setup has no DOM library, so these are the page globals those lines use.
interface PageElement {
  getAttribute(name: string): string | null;
  closest(selector: string): PageElement | null;
  textContent: string | null;
  scrollWidth: number;
  clientWidth: number;
  lang: string;
}
declare const document: { documentElement: PageElement; activeElement: PageElement | null };
declare const localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
declare const navigator: { clipboard: { readText(): Promise<string> } };
