// A throwaway OpenID provider for the tests: panva's oidc-provider (an
// OpenID Certified implementation, from npm; .ci/run installs it), with
// its own development login and consent pages, on loopback.
// Arguments: the module's path, port, client id, client secret, redirect URI.
// People: the login typed is the account; `alice` has a verified address
// and the group `devs`, `mallory` an unverified address.
import { pathToFileURL } from 'node:url';

const [modulePath, port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const { default: Provider } = await import(pathToFileURL(modulePath).href);

const people = {
  alice: { email: 'alice@example.org', email_verified: true, name: 'Alice Provider',
           groups: ['devs', 'readers'] },
  bob: { email: 'bob@example.org', email_verified: true, name: 'Bob Provider' },
  mallory: { email: 'admin@example.com', email_verified: false, name: 'Mallory' },
};

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri],
    grant_types: ['authorization_code'], response_types: ['code'],
  }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ['oidc-provider test cookie key'] },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, id) {
    const person = people[id];
    if (!person) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...person }; } };
  },
});
provider.listen(Number(port), '127.0.0.1', () => { console.log('ready'); });
