"""An ARM template's autoscale setting written with ``[parameters('…')]`` imports as a
deployment would read it: each parameter its ``defaultValue``, or what ``--parameters``
sets in the az CLI's forms (``KEY=VALUE`` read as the declared type, a parameters file
``FILE`` or ``@FILE``); what needs a deployment (``variables(…)``) stays a loss line."""
from __future__ import annotations

import json

import yaml

TEMPLATE = {
    "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
    "contentVersion": "1.0.0.0",
    "parameters": {
        "minInstanceCount": {"type": "int", "defaultValue": 1},
        "maxInstanceCount": {"type": "int", "defaultValue": 100},
        "scaleOutAt": {"type": "int", "defaultValue": 60},
        "enabled": {"type": "bool", "defaultValue": True},
        "vmssName": {"type": "string"},
    },
    "resources": [{
        "type": "Microsoft.Insights/autoscalesettings", "apiVersion": "2022-10-01", "name": "autoscalehost",
        "location": "westeurope",
        "properties": {
            "name": "autoscalehost", "enabled": "[parameters('enabled')]",
            "targetResourceUri": "[resourceId('Microsoft.Compute/virtualMachineScaleSets', parameters('vmssName'))]",
            "profiles": [{
                "name": "Profile1",
                "capacity": {"minimum": "[parameters('minInstanceCount')]",
                             "maximum": "[parameters('maxInstanceCount')]",
                             "default": "[parameters('minInstanceCount')]"},
                "rules": [{"metricTrigger": {"metricName": "Percentage CPU", "timeGrain": "PT1M",
                                             "statistic": "Average", "timeWindow": "PT5M",
                                             "timeAggregation": "Average", "operator": "GreaterThan",
                                             "threshold": "[parameters('scaleOutAt')]"},
                           "scaleAction": {"direction": "Increase", "type": "ChangeCount", "value": "1",
                                           "cooldown": "PT5M"}}]}]}}],
}


def _template(tmp_path) -> str:
    f = tmp_path / "azuredeploy.json"
    f.write_text(json.dumps(TEMPLATE))
    return str(f)


def test_a_template_with_parameters_imports_with_their_default_values(cli, tmp_path):
    proc = cli("import", _template(tmp_path), "--from", "azure")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "scalebridge import: note: autoscalehost: $.parameters: read as their defaultValue: enabled=true, "
        "minInstanceCount=1, maxInstanceCount=100, scaleOutAt=60 (set one with --parameters KEY=VALUE)")
    [policy] = list(yaml.safe_load_all(proc.stdout))
    assert (policy["min_replicas"], policy["max_replicas"]) == (1, 100)
    assert policy["profiles"][0]["rules"][0]["threshold"] == 60


def test_parameters_set_on_the_command_line_are_read_as_their_declared_type(cli, tmp_path):
    proc = cli("import", _template(tmp_path), "--from", "azure", "--parameters", "minInstanceCount=3",
               "-p", "scaleOutAt=75", "-p", "enabled=false")
    assert proc.returncode == 0, proc.stderr
    [policy] = list(yaml.safe_load_all(proc.stdout))
    assert (policy["min_replicas"], policy["max_replicas"], policy["mode"]) == (3, 100, "OFF")
    assert policy["profiles"][0]["rules"][0]["threshold"] == 75


def test_a_parameters_file_sets_them_and_a_later_key_value_wins(cli, tmp_path):
    params = tmp_path / "azuredeploy.parameters.json"
    params.write_text(json.dumps({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/"
                                             "deploymentParameters.json#", "contentVersion": "1.0.0.0",
                                  "parameters": {"maxInstanceCount": {"value": 12},
                                                 "minInstanceCount": {"value": 2}}}))
    proc = cli("import", _template(tmp_path), "--from", "azure", "--parameters", f"@{params}",
               "--parameters", "minInstanceCount=4")
    assert proc.returncode == 0, proc.stderr
    [policy] = list(yaml.safe_load_all(proc.stdout))
    assert (policy["min_replicas"], policy["max_replicas"]) == (4, 12)


def test_an_unknown_parameter_is_refused_naming_the_closest_and_the_declared_ones(cli, tmp_path):
    proc = cli("import", _template(tmp_path), "--from", "azure", "--parameters", "minInstances=3")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "scalebridge import: --parameters minInstances=3: unrecognized template parameter 'minInstances'; did you "
        "mean 'minInstanceCount'? allowed parameters: enabled, maxInstanceCount, minInstanceCount, scaleOutAt, "
        "vmssName"]


def test_a_value_not_of_the_declared_type_is_refused_in_one_line(cli, tmp_path):
    proc = cli("import", _template(tmp_path), "--from", "azure", "--parameters", "maxInstanceCount=many")
    assert proc.returncode == 2
    assert proc.stderr == ("scalebridge import: --parameters maxInstanceCount=many: the parameter is of type int: "
                           "expected an integer, got 'many'\n")


def test_parameters_for_a_format_without_template_parameters_are_refused(cli, tmp_path):
    proc = cli("import", _template(tmp_path), "--from", "gce", "--parameters", "a=1")
    assert proc.returncode == 2
    assert proc.stderr == ("scalebridge import: --parameters: the gce translator takes no parameters (its input has "
                           "no template parameters to set)\n")
