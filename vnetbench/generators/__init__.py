"""What is generated from the code and committed beside it: the reference pages
(`python -m vnetbench.generators.docsgen`), the JSON Schemas of the files vnetbench
writes (`python -m vnetbench.generators.fileschemas`) and the example compose files
(`python -m vnetbench.generators.examples`)."""
