#!/bin/tclsh
# HammerDB TPROC-C timed test written by dbperf-operator.
# Credentials come from the environment and never appear in this file.
puts "SETTING CONFIGURATION"
dbset db pg
dbset bm TPC-C
diset connection pg_host bench-pg-rw.perf.svc
diset connection pg_port 5432
diset connection pg_sslmode prefer
diset tpcc pg_superuser $::env(DBPERF_TARGET_SUPERUSER)
diset tpcc pg_superuserpass $::env(DBPERF_TARGET_SUPERUSER_PASSWORD)
diset tpcc pg_defaultdbase app
diset tpcc pg_user tpcc
diset tpcc pg_pass $::env(DBPERF_TARGET_PASSWORD)
diset tpcc pg_storedprocs true
diset tpcc pg_dbase tpcc
diset tpcc pg_count_ware 100
diset tpcc pg_partition false
diset tpcc pg_vacuum true
diset tpcc pg_driver timed
diset tpcc pg_total_iterations 10000000000
diset tpcc pg_rampup 2
diset tpcc pg_duration 5
diset tpcc pg_allwarehouse true
diset tpcc pg_timeprofile true
diset tpcc pg_keyandthink false
diset tpcc pg_raiseerror false
loadscript
puts "TEST STARTED"
vuset vu 40
vucreate
tcstart
vurun
tcstop
vudestroy
puts "TEST COMPLETE"
