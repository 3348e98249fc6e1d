// RDAP as other code sees it: the bootstrap registry (write-time TLD check, probe server lookup).
export { parseBootstrap, RdapBootstrap, RdapUnavailableError, serversFor, type RdapServices } from './bootstrap.js';
