"""Accounts, identity only: who an account is and how it signs in.

Reading, creating and changing accounts, their logins, passwords and group
grants (account.py); signing in and out with a password and login tokens
and in steps on the web pages (sign_in.py); passwords, API keys, login
tokens and the throttling of failed sign-ins (auth.py); the second factor
(TOTP codes, recovery codes, sign-ins waiting for a code) and its
enrolment (second_factor.py); an account's API keys (api_key.py); one-time
tokens mailed to an address (tokens.py) and what they make possible:
self-registration, password reset, changing one's address
(self_service.py); the caller of a call (caller.py); group membership
(membership.py); which accounts the caller may see (visibility.py); e-mail
addresses as the caller may see them (email.py).
"""
