"""How the parameters are presented to the people who change them: the
sections they are grouped in (those of the reference's parameters page, in
its order, with bugsvc's own parameters where they belong) and one
description each. The definitions and checks are settings.py's."""

# (key, title, what the section is about, parameter names in order)
SECTIONS = (
    ("core", "Required settings", "Where this installation is reached.",
     ("urlbase", "cookiepath")),
    ("general", "General", "Who runs this installation.", ("maintainer",)),
    ("admin", "Administrative policies", "What people may change about themselves.",
     ("allowbugdeletion", "allowemailchange")),
    ("auth", "User authentication", "Signing in, sign-up and the addresses accounts may have.",
     ("requirelogin", "rememberlogin", "login_token_max_age", "webservice_email_filter",
      "emailregexp", "emailregexpdesc", "emailsuffix", "createemailregexp",
      "blocked_emails", "blocked_email_domains", "password_complexity", "mfa_group",
      "user_verify_class")),
    ("ldap", "LDAP", "Checking passwords against an LDAP directory (while user_verify_class "
                     "names LDAP).",
     ("LDAPserver", "LDAPstarttls", "LDAPbinddn", "LDAPBaseDN", "LDAPuidattribute",
      "LDAPmailattribute", "LDAPfilter")),
    ("oidc", "Single sign-on (OpenID Connect)", "Signing in with OpenID Connect providers "
                                                "(bugsvc's own; also on editoidc.cgi).",
     ("oidc_providers", "oidc_create_accounts")),
    ("attachment", "Attachments", "Where attachments are served from and how large they "
                                  "may be.",
     ("attachment_base", "maxattachmentsize", "maxlocalattachment")),
    ("bugchange", "Bug change policies", "What a change to a bug needs.",
     ("duplicate_or_move_bug_status", "letsubmitterchoosepriority",
      "letsubmitterchoosemilestone", "musthavemilestoneonaccept",
      "commentonchange_resolution", "commentonduplicate", "noresolveonopenblockers")),
    ("bugfields", "Bug fields", "Which optional fields bugs have, and the defaults of "
                                "new bugs.",
     ("useclassification", "usetargetmilestone", "useqacontact", "usestatuswhiteboard",
      "use_see_also", "defaultpriority", "defaultseverity", "defaultplatform",
      "defaultopsys")),
    ("groupsecurity", "Group security", "The groups that give rights, and who sees whom.",
     ("makeproductgroups", "insidergroup", "timetrackinggroup", "comment_taggers_group",
      "edit_comments_group",
      "usevisibilitygroups", "strict_isolation")),
    ("mta", "Email", "How mail leaves and who it is from.",
     ("mail_delivery_method", "mailfrom", "smtpserver", "smtp_username", "smtp_password",
      "smtp_ssl", "globalwatchers")),
    ("query", "Query defaults", "How searches and bug lists behave.",
     ("search_allow_no_criteria", "default_search_limit", "max_search_results")),
    ("usermatch", "User matching", "How people are chosen in forms and found by calls.",
     ("usemenuforusers", "maxusermatches")),
    ("webhooks", "Webhooks", "Calls to other services when bugs change (bugsvc's own).",
     ("webhooks_enabled", "webhooks_group", "webhooks_any_product_group",
      "webhooks_allow_private_addresses")),
    ("mcp", "AI assistants (MCP)", "The Model Context Protocol endpoint at /mcp "
                                   "(bugsvc's own).",
     ("mcp_enabled", "mcp_allow_write")),
    ("mailin", "Mail in", "Replies to bug mail and new bugs by mail (bugsvc mail-in).",
     ("mailin_address", "mailin_new_bug_address")),
)

DESCRIPTIONS = {
    "oidc_providers": "The OpenID Connect providers people may sign in with, as a JSON list of "
                      "{\"name\", \"issuer\", \"client_id\", \"client_secret\"} (optionally "
                      "\"group_claim\" and \"groups\": {claim value: group name}); the "
                      "issuer is https:// (http:// on loopback only). Client secrets are never "
                      "shown: ******** sent back keeps the stored one. The provider's redirect "
                      "address is this site's /oidc/callback.",
    "oidc_create_accounts": "A provider's verified e-mail address that no account has makes a "
                            "new account (recorded in the audit log); off: only existing "
                            "accounts sign in with a provider.",
    "user_verify_class": "Where passwords are checked, tried in the order given until one "
                         "accepts, separated by commas: DB (the password stored here), LDAP "
                         "(the directory of the LDAP settings), or both (LDAP,DB).",
    "LDAPserver": "The LDAP servers, tried in turn until one answers, separated by commas: "
                  "host, host:port, ldap://host[:port] or ldaps://host[:port] (TLS from the "
                  "start). Certificates are checked against the system's trusted "
                  "authorities.",
    "LDAPstarttls": "Start TLS on a plain connection (ldap://) before anything is sent; the "
                    "server's certificate is checked.",
    "LDAPbinddn": "The account that searches the directory and its password, as dn:password "
                  "(cn=search,ou=services,dc=example,dc=com:secret); empty to search "
                  "anonymously. Never shown once set.",
    "LDAPBaseDN": "Where people are searched for in the directory (ou=people,dc=example,"
                  "dc=com).",
    "LDAPuidattribute": "The attribute of a person's entry that holds the name they sign in "
                        "with.",
    "LDAPmailattribute": "The attribute that holds a person's e-mail address, which becomes "
                         "their login here; empty: the name they sign in with is their login "
                         "(set emailsuffix then).",
    "LDAPfilter": "An LDAP filter ANDed with the name search, to choose who may sign in "
                  "((memberOf=cn=bugs,ou=groups,dc=example,dc=com)); empty for everyone.",
    "urlbase": "The address of this installation, ending with a slash "
               "(https://bugs.example.com/): links in mail and See Also links to local bugs "
               "start with it.",
    "cookiepath": "The path the web pages' cookies are sent for; / unless the site lives "
                  "under a path behind a proxy.",
    "maintainer": "The address of whoever runs this installation, shown to every visitor.",
    "allowbugdeletion": "Deleting a product or a component that has bugs deletes those bugs, "
                        "with their comments, attachments, history and flags, after a page "
                        "that says how many. Off: such a deletion is refused.",
    "allowemailchange": "People may change their own e-mail address (their login), "
                        "confirmed from the new address.",
    "requirelogin": "Only signed-in people see anything; anonymous callers reach only the "
                    "version, the time zone, the parameters and signing in.",
    "rememberlogin": "Whether a session outlives the browser: always (on), never (off), or "
                     "as the sign-in form's box says, ticked (defaulton) or not (defaultoff) "
                     "at first.",
    "mfa_group": "Members must sign in with a second factor (an authenticator app's code); "
                 "one without it enrols at their next sign-in on the pages. None: nobody must.",
    "login_token_max_age": "Days a login token stays valid after its last use (1 to 3650).",
    "webservice_email_filter": "Anonymous callers see e-mail addresses without their "
                               "domain.",
    "emailregexp": "A regular expression every new login must match.",
    "emailregexpdesc": "What a legal address looks like, in words; shown when one does not "
                       "match the expression above.",
    "emailsuffix": "Appended to logins to make the addresses mail goes to (empty when logins "
                   "are full addresses).",
    "createemailregexp": "Addresses that may create their own account by mail; empty: "
                         "nobody may.",
    "blocked_emails": "Addresses, separated by commas or spaces, that may not create their "
                      "own account.",
    "blocked_email_domains": "E-mail domains (each with its subdomains), separated by commas "
                             "or spaces, whose addresses may not create their own account.",
    "password_complexity": "What a new password must contain.",
    "attachment_base": "Another origin that serves attachment content, ending with a slash "
                       "(%bugid% stands for the bug number); it must be another host than "
                       "urlbase's. Empty: this site serves them.",
    "maxattachmentsize": "The largest attachment, in kilobytes (the larger of this and the "
                         "next one counts).",
    "maxlocalattachment": "The largest attachment, in megabytes.",
    "duplicate_or_move_bug_status": "The closed status a bug marked as a duplicate moves to.",
    "letsubmitterchoosepriority": "Reporters choose the priority of a new bug; off: it gets "
                                  "the default priority.",
    "letsubmitterchoosemilestone": "Reporters choose the target milestone of a new bug; off: "
                                   "it gets the product's default.",
    "musthavemilestoneonaccept": "Moving a bug to IN_PROGRESS needs a target milestone other "
                                 "than the default (while target milestones are used).",
    "commentonchange_resolution": "Changing a bug's resolution needs a comment.",
    "commentonduplicate": "Marking a bug as a duplicate needs a comment.",
    "noresolveonopenblockers": "A bug with open dependencies cannot be resolved FIXED.",
    "useclassification": "Products are grouped in classifications.",
    "usetargetmilestone": "Bugs have a target milestone.",
    "useqacontact": "Bugs have a QA contact, and components a default one.",
    "usestatuswhiteboard": "The pages show and offer the status whiteboard.",
    "use_see_also": "The pages show and offer See Also links.",
    "defaultpriority": "The priority of a new bug that names none.",
    "defaultseverity": "The severity of a new bug that names none.",
    "defaultplatform": "The hardware of a new bug that names none; empty: it must be given.",
    "defaultopsys": "The operating system of a new bug that names none; empty: it must be "
                    "given.",
    "makeproductgroups": "A new product gets a group of its own name that restricts its "
                         "bugs.",
    "insidergroup": "Members see and make private comments and attachments; none: nobody.",
    "timetrackinggroup": "Members see and change the time-tracking fields; none: nobody.",
    "comment_taggers_group": "Members may tag comments; none: comment tags are off.",
    "edit_comments_group": "Members may edit their own comments (the earlier text is kept, "
                           "for insiders and administrators to read); none: nobody.",
    "usevisibilitygroups": "People see only the accounts that share a group with them.",
    "strict_isolation": "The assignee, QA contact and CC list of a bug must be able to edit "
                        "bugs of its product.",
    "mail_delivery_method": "How mail leaves: SMTP sends it, Test appends it to a file beside "
                            "the database, None sends nothing.",
    "mailfrom": "The sender of every mail.",
    "smtpserver": "The SMTP server, host or host:port.",
    "smtp_username": "The SMTP account; empty: no sign-in.",
    "smtp_password": "The SMTP account's password. It is never shown; leave the box empty "
                     "to keep it.",
    "smtp_ssl": "Connect to the SMTP server with TLS from the start (else STARTTLS is "
                "required before the password is sent).",
    "globalwatchers": "Logins, separated by commas or spaces, that get every bug mail they "
                      "may see.",
    "search_allow_no_criteria": "A search may have no criteria at all.",
    "default_search_limit": "How many bugs a bug list page shows when its address names no "
                            "limit (0: all).",
    "max_search_results": "The most bugs a search returns (0: no limit).",
    "usemenuforusers": "People are chosen from drop-down menus instead of typed.",
    "maxusermatches": "The most accounts one search for people finds (0: no limit).",
    "webhooks_enabled": "Webhooks are called at all.",
    "webhooks_group": "Members may register webhooks.",
    "webhooks_any_product_group": "Members may register webhooks for every product.",
    "webhooks_allow_private_addresses": "Webhook addresses may name loopback, private or "
                                        "link-local hosts (off keeps webhooks from reaching "
                                        "services inside the server's network).",
    "mcp_enabled": "The /mcp endpoint answers; its tools read as the API does for the same "
                   "caller.",
    "mcp_allow_write": "Callers with an API key are offered the /mcp tools that file, "
                       "comment, update bugs and set flags (with their own rights).",
    "mailin_address": "Where replies to bug mail are received; when set, every bug mail's "
                      "Reply-To is this address with a token for its bug and recipient "
                      "(empty: off).",
    "mailin_new_bug_address": "Where mail files a new bug as the account of the sender's "
                              "address, trusting the From line as Bugzilla's email_in.pl "
                              "does: set it only behind a mail server that checks senders "
                              "(empty: off).",
}
