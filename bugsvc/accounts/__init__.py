"""Accounts and what they may do: passwords, API keys, login tokens and the
throttling of failed sign-ins (auth.py), the caller of a call (caller.py),
group membership (membership.py), which accounts the caller may see
(visibility.py), and e-mail addresses as the caller may see them (email.py)."""
