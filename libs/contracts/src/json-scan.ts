import type { FieldError } from './errors';

/**
 * A pass over a JSON body's bytes, before JSON.parse: parsing 8 million zeros takes seconds
 * (V8 grows the array as it goes), longer than anything the limits allow is worth. It counts the
 * elements of every array and the keys of every object, and stops at the first container over
 * its bound, naming where it is. No array a schema allows has more than
 * `limits.maxArrayItemsAnywhere` elements, so nothing valid is refused; unknown fields, which
 * would be dropped anyway, get the same bound. It does not check the JSON is well formed
 * (JSON.parse does that next): on malformed input it only ever stops early or finds nothing.
 */

interface Frame {
  array: boolean;
  /** Elements (array) or keys (object) seen so far. */
  count: number;
  /** After `[`, `{` or `,`: the next value (array) or key (object) starts an entry. */
  expecting: boolean;
  keyStart: number;
  keyEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index of the quote that closes the string opened at `open`. */
function closingQuote(bytes: Uint8Array, open: number): number {
  let i = open + 1;
  while (i < bytes.length) {
    const byte = bytes[i];
    if (byte === BACKSLASH) i += 2;
    else if (byte === QUOTE) return i;
    else i += 1;
  }
  return bytes.length;
}

function keyOf(bytes: Uint8Array, frame: Frame): string {
  const raw = new TextDecoder().decode(bytes.subarray(frame.keyStart, frame.keyEnd));
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** The path of the value the innermost frame of `stack` is in, as `content.data[3]`. */
function pathOf(bytes: Uint8Array, stack: Frame[]): string {
  return stack.reduce<string>((path, frame) => {
    if (frame.array) return `${path}[${frame.count - 1}]`;
    const key = keyOf(bytes, frame);
    return path ? `${path}.${key}` : key;
  }, '');
}

export function scanJsonSizes(
  bytes: Uint8Array,
  max: { arrayItems: number; objectKeys: number },
): FieldError | undefined {
  const stack: Frame[] = [];
  let top: Frame | undefined;
  const tooMany = (): FieldError => {
    const path = pathOf(bytes, stack.slice(0, -1));
    const name = path || 'body';
    return top?.array
      ? {
          path,
          rule: 'maxItems',
          detail: `${name} must NOT have more than ${max.arrayItems} items`,
        }
      : {
          path,
          rule: 'maxProperties',
          detail: `${name} must NOT have more than ${max.objectKeys} properties`,
        };
  };
  /** A value starts: in an array awaiting one, that is one more element. */
  const valueStarts = (): boolean => {
    if (!top?.array || !top.expecting) return false;
    top.expecting = false;
    top.count += 1;
    return top.count > max.arrayItems;
  };
  const open = (array: boolean) => {
    top = { array, count: 0, expecting: true, keyStart: 0, keyEnd: 0 };
    stack.push(top);
  };

  for (let i = 0; i < bytes.length; i += 1) {
    switch (bytes[i] ?? 0x20) {
      case QUOTE: {
        const end = closingQuote(bytes, i);
        if (top && !top.array && top.expecting) {
          top.expecting = false;
          top.count += 1;
          top.keyStart = i + 1;
          top.keyEnd = end;
          if (top.count > max.objectKeys) return tooMany();
        } else if (valueStarts()) return tooMany();
        i = end;
        break;
      }
      case 0x5b: // [
      case 0x7b: // {
        if (valueStarts()) return tooMany();
        open(bytes[i] === 0x5b);
        break;
      case 0x5d: // ]
      case 0x7d: // }
        stack.pop();
        top = stack[stack.length - 1];
        break;
      case 0x2c: // ,
        if (top) top.expecting = true;
        break;
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
      case 0x3a: // :
        break;
      default: // a number, true, false or null
        if (valueStarts()) return tooMany();
    }
  }
  return undefined;
}
