"""The catalogue a tracker is configured with: products, components,
versions, milestones, classifications, keywords and groups looked up
(catalog.py), the rules their admin calls share (admin.py), per-product group
controls (group_control.py), which flag types apply where (flag_rules.py),
field type codes (field_types.py) and the instance parameters (settings.py)."""
