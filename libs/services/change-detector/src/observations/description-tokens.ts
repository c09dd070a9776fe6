import { Inject, Injectable, Optional } from '@nestjs/common';

/** How many tokens `KnownDescriptionTokens` remembers at most (optional; default a million). */
export const DESCRIPTION_TOKENS_CAPACITY = Symbol('DESCRIPTION_TOKENS_CAPACITY');

/**
 * The change-detector's side of the description token vocabulary (migration DescriptionTokens).
 *
 * Statement triggers on `auctions` add the tokens of every description written, which costs a
 * distinct over ~90 tokens per row in every batch although almost all of them are long known.
 * The change-detector instead remembers which tokens the vocabulary holds (the vocabulary only
 * grows, so a token once committed stays), sends only the others, and tells the triggers of its
 * transaction that it did (`cars.description_tokens_recorded`).
 *
 * Tokens are split exactly like the index expression `string_to_array(description, ' ')`.
 */
@Injectable()
export class KnownDescriptionTokens {
  private readonly known = new Set<string>();

  /** At most this many tokens are remembered; past it the memory starts over (it is only a shortcut). */
  constructor(@Optional() @Inject(DESCRIPTION_TOKENS_CAPACITY) private readonly capacity: number = 1_000_000) {}

  /** The distinct tokens of these descriptions not known to be in the vocabulary. */
  unknown(descriptions: Iterable<string | null | undefined>): string[] {
    const fresh = new Set<string>();
    for (const description of descriptions) {
      if (!description) continue;
      for (const token of description.split(' ')) {
        if (token !== '' && !this.known.has(token)) fresh.add(token);
      }
    }
    return [...fresh];
  }

  /** Tokens now committed to the vocabulary (call after the commit, never before). */
  remember(tokens: readonly string[]): void {
    if (this.known.size + tokens.length > this.capacity) this.known.clear();
    for (const token of tokens) this.known.add(token);
  }

  get size(): number {
    return this.known.size;
  }
}
