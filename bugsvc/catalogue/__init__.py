"""The catalogue a tracker is configured with: products, components,
versions, milestones, classifications, keywords and groups looked up
(catalog.py), the rules their admin calls share (admin.py), per-product group
controls (group_control.py), which flag types apply where (flag_rules.py),
field type codes (field_types.py), the instance parameters (settings.py)
and the default installation data with the first administrator
(install.py)."""
