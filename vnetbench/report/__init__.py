"""Reports: summary tables, ratios, plots and the regression comparison."""
