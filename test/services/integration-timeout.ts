// testTimeout is a global jest option, not a per-project one: integration tests set theirs here.
jest.setTimeout(60_000);
