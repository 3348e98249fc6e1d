// A refusal the user can act on (a bad setting, a port taken, a store that cannot be reached):
// the CLI prints its message alone, one line, where any other error prints its stack.
export class Refusal extends Error {}
