"""The catalogue a tracker is configured with, one module per object:
products (product.py), components (component.py), versions and milestones
(version_milestone.py), classifications (classification.py), keywords
(keyword.py), flag types (flag_type.py; which types apply where and who
may set them: flag_rules.py), groups (group.py), the per-product group
controls and who may search and file bugs in which product
(group_control.py), the instance parameters with the audit log's last time
(settings.py), the one list of bug fields (bug_fields.py) and the fields
table's definitions, legal values and custom fields (field.py). Their
lookups by id and name (catalog.py), the rules their admin shares
(admin.py), field type codes (field_types.py) and the default installation
data with the first administrator (install.py).
"""
