"""Notifications: from the outbox to bug mail and webhooks, and what
accounts choose about them.

recipients.py works out who may be told about an event (the reference's
bug mail rules, flag requests, matching webhooks) and queues one message
each; bugmail.py, flagmail.py and account_mail.py render a mail for its
recipient at send time, through the recipient's own view of the bug;
webhook_payload.py builds a webhook call as its owner may see it, and
signature.py signs it (Standard Webhooks); mailer.py and webhook_http.py
carry them out (smtplib, http.client), and worker.py is the delivery worker
that takes messages with a lease, retries, parks and purges.

mail_settings.py holds each account's mail preferences (which mail it
wants, whom it watches, which bugs it ignores) and reads and changes them;
webhook.py registers, lists, changes and removes webhooks (addresses.py
decides which URLs may be called); delivery_queue.py shows the queue to
administrators and sends parked messages again.
"""
