/**
 * Which device names an enrolment code accepts (ADR 0019): its `device_pattern` read as a glob
 * over the whole name. `*` stands for any run of characters (none included), `?` for exactly one,
 * every other character for itself: device names may hold any character a regular expression
 * gives a meaning to (`.`, `+`, `(`, `\`...), so the rest is escaped, never interpreted. There is
 * no escape for `*` or `?` themselves: a pattern that needs one literally matches it with `?`.
 *
 * One character is one code point (the `u` flag), so `?` matches an emoji as a person counts it.
 */
export function matchesDevicePattern(pattern: string, name: string): boolean {
  return devicePatternRegExp(pattern).test(name);
}

function devicePatternRegExp(pattern: string): RegExp {
  let source = '';
  for (const char of pattern) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += escapeRegExp(char);
  }
  // `s`: `.` matches line breaks too (the contract refuses control characters in names, but
  // this rule should not depend on it).
  return new RegExp(`^${source}$`, 'su');
}

/** Escapes a syntax character; the `u` flag refuses escapes of any other (`\-` included). */
function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}
